/// `/pairings` (add, remove, list), answered for an admin controller only.
public enum PairingsRequest {
    public struct Outcome: Sendable {
        public var response: TLV8
        /// Controllers whose pairing was removed: their sessions must end.
        public var removed: [String] = []
        /// The state changed and must be stored.
        public var changed = false
    }

    public static func handle(_ request: TLV8, controllerID: String, state: inout HAPPairingState) -> Outcome {
        guard state.pairings[controllerID]?.isAdmin == true else { return Outcome(response: PairSetup.error(2, .authentication).response) }
        switch request.byte(.method).flatMap(HAPPairingMethod.init(rawValue:)) {
        case .addPairing:
            guard let identifier = request[.identifier], let id = String(bytes: identifier, encoding: .utf8),
                  let key = request[.publicKey], key.count == 32, let permissions = request.byte(.permissions) else {
                return Outcome(response: PairSetup.error(2, .unknown).response)
            }
            if let existing = state.pairings[id], existing.publicKey != key {
                return Outcome(response: PairSetup.error(2, .unknown).response)
            }
            if state.pairings[id] == nil, state.pairings.count >= 16 { return Outcome(response: PairSetup.error(2, .maxPeers).response) }
            state.pairings[id] = HAPPairingState.Pairing(publicKey: key, isAdmin: permissions & 1 == 1)
            return Outcome(response: done(), changed: true)
        case .removePairing:
            guard let identifier = request[.identifier], let id = String(bytes: identifier, encoding: .utf8) else {
                return Outcome(response: PairSetup.error(2, .unknown).response)
            }
            var removed: [String] = []
            if state.pairings.removeValue(forKey: id) != nil { removed.append(id) }
            // With the last admin gone, nobody could manage the rest: all pairings go.
            if !state.pairings.values.contains(where: \.isAdmin) {
                removed += state.pairings.keys.sorted()
                state.pairings = [:]
            }
            return Outcome(response: done(), removed: removed, changed: !removed.isEmpty)
        case .listPairings:
            var response = TLV8()
            response.append(.state, byte: 2)
            for (index, id) in state.pairings.keys.sorted().enumerated() {
                if index > 0 { response.append(.separator, []) }
                let pairing = state.pairings[id]!
                response.append(.identifier, Array(id.utf8))
                response.append(.publicKey, pairing.publicKey)
                response.append(.permissions, byte: pairing.isAdmin ? 1 : 0)
            }
            return Outcome(response: response)
        default:
            return Outcome(response: PairSetup.error(2, .unknown).response)
        }
    }

    private static func done() -> TLV8 {
        var response = TLV8()
        response.append(.state, byte: 2)
        return response
    }
}
