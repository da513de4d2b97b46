import RoomcastAgent

// edge-agent: wiring only. Everything it does lives in RoomcastAgent (EdgeAgentCLI).
await EdgeAgentCLI.main()
