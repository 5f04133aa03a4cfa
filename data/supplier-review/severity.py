def run(data):
    """Incidents per severity, from incidents.csv (each row's cells are strings)."""
    counts = {"high": 0, "medium": 0, "low": 0}
    for row in data["incidents.csv"]:
        level = row["severity"].strip().lower()
        counts[level] = counts.get(level, 0) + 1
    return counts
