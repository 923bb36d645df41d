"""The API layer every other package builds on: objects and quantities, selectors, the kind
registry and field schema, typed requests and errors, and the placement checks several
components share."""
