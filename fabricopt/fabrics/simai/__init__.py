"""SimAI-Analytical compatibility: AICB/SimAI workload files, SimAI's NCCL efficiency tables, its iteration pricing and the fabric comparison over it."""
