"""The project's hostile-input fuzzer: mutated instance, solution and envelope files, and the probe that runs each through the command and the API."""
