// Placeholder: the RoomcastAdvertising module's sources go in this folder.
