// Placeholder: the RoomcastSimulation module's sources go in this folder.
