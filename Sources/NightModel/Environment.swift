/// What the pod's temperature and humidity sensors read at one moment.
package struct Environment: Sendable, Hashable, Codable {
    /// Bed surface temperature per side, °C (warms under a sleeper, cools when empty).
    package var bedTemperature: [Double]
    /// Room temperature, °C.
    package var ambientTemperature: Double
    /// Relative humidity, percent.
    package var humidity: Double

    package init(bedTemperature: [Double], ambientTemperature: Double, humidity: Double) {
        self.bedTemperature = bedTemperature
        self.ambientTemperature = ambientTemperature
        self.humidity = humidity
    }
}
