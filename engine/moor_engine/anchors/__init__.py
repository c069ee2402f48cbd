"""Custom anchors: what a command declared in `moor.toml` prints, observed as facts and
bound like code (DESIGN §4b). `declarations` reads and refuses the declarations, `trust`
decides whether this workspace's commands may run (from outside the repository only),
`probe` runs one command, `facts` makes its output an observation, `machine` derives an
anchor's state from the lock, the observation and its streak, and journals it."""
