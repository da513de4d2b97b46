import Foundation
import RoomcastSimulation
import Shared

// Thin wiring: parse the command line against SimulatorCommand.spec, run, exit with its code.
switch CommandLineTool.decide(SimulatorCommand.spec) {
case .exit(let code):
    exit(code.rawValue)
case .run(let command):
    let code = await SimulatorCommand.run(
        command,
        output: { FileHandle.standardOutput.write(Data($0.utf8)) },
        errorOutput: { FileHandle.standardError.write(Data($0.utf8)) })
    exit(code.rawValue)
}
