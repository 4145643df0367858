"""Getting a database: the embedded server, migrations and the connection pool."""
