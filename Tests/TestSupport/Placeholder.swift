// Test support: helpers shared by the test targets (a real mosquitto on a free port, fixtures).
