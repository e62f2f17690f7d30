"""`sleuth chaos`: runs fault scenarios against a real `sleuth up` on this machine and reports figures.

`harness` starts and drives the stack, `scenarios` holds one function per scenario, `report` prints the
table and writes the HTML report (inline SVG charts)."""
