// Placeholder: the RoomcastAggregator module's sources go in this folder.
