"""View models: what each page shows, built from the store and the run folders, no HTML here
(except the few builders whose whole job is safe markup: highlighting, diffs, ANSI, Markdown, SVG)."""
