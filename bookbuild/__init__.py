"""The book's build, as Python modules (`python -m bookbuild.<module>`)."""
