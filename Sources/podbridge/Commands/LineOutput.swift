import Foundation

/// Prints a line and flushes it, for commands whose output is read while they run: a script
/// waiting for `simulate`'s tty path, `podbridge stream | grep left`. Into a pipe or a file,
/// standard output is block-buffered and would hold lines back by kilobytes.
func say(_ line: String) {
    print(line)
    fflush(nil)
}
