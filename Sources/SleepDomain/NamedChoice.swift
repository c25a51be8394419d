/// A setting that is one of a few names: decoding a name that is not one of them says which
/// names are, where the standard decoding says only "Cannot initialize X from invalid String
/// value y" with the type's Swift name, which a user editing a file cannot act on.
package protocol NamedChoice: RawRepresentable, CaseIterable, Decodable where RawValue == String {}

extension NamedChoice {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let value = Self(rawValue: name) else {
            let names = Self.allCases.map { $0.rawValue }.joined(separator: ", ")
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected one of \(names), got '\(name)'")
        }
        self = value
    }
}
