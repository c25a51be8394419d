/// What the pod's temperature and humidity sensors read at one moment.
public struct Environment: Sendable, Hashable, Codable {
    /// Bed surface temperature per side, °C (warms under a sleeper, cools when empty).
    public var bedTemperature: [Double]
    /// Room temperature, °C.
    public var ambientTemperature: Double
    /// Relative humidity, percent.
    public var humidity: Double

    public init(bedTemperature: [Double], ambientTemperature: Double, humidity: Double) {
        self.bedTemperature = bedTemperature
        self.ambientTemperature = ambientTemperature
        self.humidity = humidity
    }
}
