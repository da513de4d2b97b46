// Placeholder: the RoomcastHCI module's sources go in this folder.
