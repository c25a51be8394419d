import Foundation

/// The operating system's words for a file error ("No such file or directory"), for messages
/// that name a path: Foundation's own description is a dump of its error domain and codes.
package enum FileErrorReason {
    package static func describe(_ error: any Error) -> String {
        let ns = error as NSError
        let posix = ns.domain == NSPOSIXErrorDomain ? ns : (ns.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        if let posix, posix.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(posix.code))) }
        return ns.localizedDescription
    }
}
