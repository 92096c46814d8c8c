"""printjob's SQL, written once for every database.

`dialect` says what differs between SQLite and PostgreSQL; `schema` declares the tables
and their migrations; `repositories` the repository ports and the unit of work's shell;
`views` the one-statement polling reads; `rate_counts` the shared counters' statements;
`rows` how domain values become rows and back. The database modules
(`printjob_adapters.sqlite`, `printjob_adapters.postgres`) keep only connections,
transactions and what only their database can do.
"""
