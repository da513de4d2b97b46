import RoomcastAggregator

// aggregator: wiring only. Everything it does lives in RoomcastAggregator (AggregatorCLI).
await AggregatorCLI.main()
