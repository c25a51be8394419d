import SleepStore

// SleepStore and SleepAnalysis both name a `SleepStage` and a `StageProbabilities`, and the
// module SleepStore also holds a class SleepStore, so `SleepStore.SleepStage` cannot be
// spelled. This file imports only the store and names its types for the rest of the hub.
typealias StoreStage = SleepStage
typealias StoreStageProbabilities = StageProbabilities
