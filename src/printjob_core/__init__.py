"""printjob's domain: jobs, credits, idempotency and limits, with ports for everything else."""
