/// A bad input file: names the file and the 1-based line so the user can fix it.
package struct InputError: Error, CustomStringConvertible, Equatable, Sendable {
    package enum Kind: Equatable, Sendable {
        case empty
        case missingColumn(String)
        case unknownColumn(String)
        /// The first line is data (it starts with a number), not the header naming the columns.
        case noHeader(firstField: String, required: [String])
        case duplicateColumn(String)
        case wrongFieldCount(expected: Int, found: Int)
        case notANumber(column: String, text: String)
        case notABoolean(column: String, text: String)
        case unknownStage(String)
        case unsorted(column: String)
        case duplicateTime(column: String)
        case missingValue(column: String)
        /// A time that cannot be Unix seconds of a recording (before 1970 or after 2286).
        case timeOutOfRange(column: String, text: String)
        /// Times spanning longer than `InputFormats.maximumSpan`: not the recording of a
        /// night or a few, and a timeline that long would not fit in memory.
        case spanTooLong(column: String, days: Double)
        /// A staged interval whose end is not after its start.
        case endNotAfterStart
        /// A staged interval that starts before the previous one ends.
        case overlapsPrevious
    }
    package var file: String
    /// 1-based line number; 1 is the header.
    package var line: Int
    package var kind: Kind

    package init(file: String, line: Int, kind: Kind) { self.file = file; self.line = line; self.kind = kind }

    package var description: String {
        let what: String = switch kind {
        case .empty: "no data rows"
        case .missingColumn(let c): "missing column '\(c)'"
        case .unknownColumn(let c): "unknown column '\(c)'"
        case .noHeader(let f, let r):
            "the first line must be a header naming the columns (\(r.joined(separator: ", ")) and any others of the format), "
                + "not data ('\(f)')"
        case .duplicateColumn(let c): "column '\(c)' appears twice"
        case .wrongFieldCount(let e, let f): "expected \(e) fields, found \(f)"
        case .notANumber(let c, let t): "'\(t)' in column '\(c)' is not a number"
        case .notABoolean(let c, let t): "'\(t)' in column '\(c)' is not a boolean (0/1/true/false)"
        case .unknownStage(let s): "unknown stage '\(s)' (expected awake, core, deep, rem or unscored)"
        case .unsorted(let c): "times in column '\(c)' go backwards"
        case .duplicateTime(let c): "time in column '\(c)' repeats the previous one"
        case .missingValue(let c): "column '\(c)' is empty"
        case .timeOutOfRange(let c, let t): "'\(t)' in column '\(c)' is not a time in Unix seconds (0 to 10000000000)"
        case .spanTooLong(let c, let d):
            "the times in column '\(c)' span \(d.formatted2) days; a file may span at most "
                + "\(Int(InputFormats.maximumSpan / 86_400)) (split it by night)"
        case .endNotAfterStart: "'end' is not after 'start'"
        case .overlapsPrevious: "'start' is before the previous row's 'end': the intervals overlap"
        }
        return "\(file):\(line): \(what)"
    }
}

/// A minimal CSV table: comma-separated, no quoting (all our formats are numeric).
struct CSVTable {
    var header: [String]
    /// (1-based line number, fields) of every non-blank data line.
    var rows: [(line: Int, fields: [String])]

    init(text: String, file: String, known: Set<String>, required: [String]) throws {
        // "\r\n" is one Character in Swift, so split on both forms of line end.
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .map(String.init)
        if lines.first?.hasPrefix("\u{FEFF}") == true { lines[0].removeFirst() }
        guard let headerLine = lines.first, !headerLine.trimmingWhitespace.isEmpty else {
            throw InputError(file: file, line: 1, kind: .empty)
        }
        header = headerLine.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingWhitespace }
        var seen = Set<String>()
        for c in header {
            guard known.contains(c) else {
                throw InputError(file: file, line: 1, kind: Double(c) != nil ? .noHeader(firstField: c, required: required) : .unknownColumn(c))
            }
            guard seen.insert(c).inserted else { throw InputError(file: file, line: 1, kind: .duplicateColumn(c)) }
        }
        for c in required where !seen.contains(c) { throw InputError(file: file, line: 1, kind: .missingColumn(c)) }
        rows = []
        for (i, l) in lines.enumerated().dropFirst() where !l.trimmingWhitespace.isEmpty {
            let fields = l.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingWhitespace }
            guard fields.count == header.count else {
                throw InputError(file: file, line: i + 1, kind: .wrongFieldCount(expected: header.count, found: fields.count))
            }
            rows.append((i + 1, fields))
        }
        guard !rows.isEmpty else { throw InputError(file: file, line: 2, kind: .empty) }
    }

    func column(_ name: String) -> Int? { header.firstIndex(of: name) }

    /// The number in a field, nil if empty; non-numbers and non-finite values are errors.
    static func number(_ text: String, column: String, file: String, line: Int) throws -> Double? {
        if text.isEmpty { return nil }
        guard let v = Double(text), v.isFinite else {
            throw InputError(file: file, line: line, kind: .notANumber(column: column, text: text))
        }
        return v
    }
}

/// Checks that times strictly increase, are Unix seconds and stay within
/// `InputFormats.maximumSpan` of the first, naming the line that breaks it.
struct StrictlyIncreasing {
    var column: String
    var file: String
    private var first: Double?
    private var last: Double?
    init(column: String, file: String) { self.column = column; self.file = file }
    mutating func check(_ t: Double, line: Int) throws {
        guard (0...InputFormats.latestTime).contains(t) else {
            throw InputError(file: file, line: line, kind: .timeOutOfRange(column: column, text: "\(t)"))
        }
        if let last {
            if t == last { throw InputError(file: file, line: line, kind: .duplicateTime(column: column)) }
            if t < last { throw InputError(file: file, line: line, kind: .unsorted(column: column)) }
        }
        if let first, t - first > InputFormats.maximumSpan {
            throw InputError(file: file, line: line, kind: .spanTooLong(column: column, days: (t - first) / 86_400))
        }
        first = first ?? t
        last = t
    }
}

extension Double {
    fileprivate var formatted2: String { "\((self * 100).rounded() / 100)" }
}

extension String {
    var trimmingWhitespace: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
