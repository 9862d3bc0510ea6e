"""The book's build pipeline: the decisions and steps behind `make book` and its siblings."""
