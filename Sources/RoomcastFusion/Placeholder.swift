// Placeholder: the RoomcastFusion module's sources go in this folder.
