"""What a person reads about a plan: the text tree of a plan (`render`) and the one-page HTML
report of a run (`html`): the plan, the comparison of methods, the certificate and its plots."""
