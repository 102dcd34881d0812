"""What real code uses: a ranking of torch APIs by the files that use them, and the handbook's coverage of it."""
