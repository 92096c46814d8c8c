"""The entry points: the `/v1` Litestar app and the `printjob` command."""
