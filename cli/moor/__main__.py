from moor.launch import run

run()
