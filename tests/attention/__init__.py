"""ua.nn and attention: the formulas against a float64 reference, each route's plan and kernel."""
