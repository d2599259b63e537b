"""The example app of the README: a few jobs, one of which fails now and then."""
