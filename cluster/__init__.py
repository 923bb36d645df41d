"""All of kubemu's logic: the API objects, the apiserver, the components, the runtimes and the
scenario runner; never imports Ray (docs/architecture.md)."""
