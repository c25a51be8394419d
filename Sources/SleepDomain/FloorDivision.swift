/// Integer division rounding towards minus infinity, and its remainder (always ≥ 0 for a
/// positive divisor): the arithmetic of wrapping clocks, weekdays and day counts.
package func floorDiv(_ a: Int, _ b: Int) -> Int {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}

package func floorMod(_ a: Int, _ b: Int) -> Int { a - floorDiv(a, b) * b }
