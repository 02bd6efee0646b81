"""The package's shape: layers, import rules, size and quality checks, the docs, the CLI, install and first use."""
