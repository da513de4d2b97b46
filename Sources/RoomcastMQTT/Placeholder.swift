// Placeholder: the RoomcastMQTT module's sources go in this folder.
