// Placeholder: the RoomcastAgent module's sources go in this folder.
