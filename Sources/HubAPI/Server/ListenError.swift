import Foundation

/// The API's address could not be taken when the hub started: said in a user's words, with
/// what to do, instead of NIO's "bind(descriptor:ptr:bytes:): Address already in use".
package struct ListenError: Error, CustomStringConvertible, Equatable {
    package let address: String
    /// The bind's errno; nil: the host name did not resolve.
    package let errno: Int32?

    package init(address: String, errno: Int32?) {
        self.address = address
        self.errno = errno
    }

    package var description: String {
        let why = switch errno {
        case nil: "no address is known for that host name (a typo, or no DNS yet)"
        case EADDRINUSE: "the address is in use (another podbridge run, or another program on that port)"
        case EACCES: "permission denied (a port below 1024 needs root)"
        case EADDRNOTAVAIL: "no interface of this machine has that address"
        case let code?: String(cString: strerror(code))
        }
        return "cannot serve the API on \(address): \(why); choose another with --listen or api.listen, "
            + "or run without it (--no-api)"
    }
}
