import RoomcastSimulation
import Shared
import RoomcastCLI

// Thin wiring: parse the command line against SimulatorCommand.spec, run the chosen subcommand, exit with its code.
await CommandLineTool.main(SimulatorCommand.spec)
