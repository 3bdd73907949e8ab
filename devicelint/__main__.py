from devicelint.cli import main

main(prog_name="devicelint")
