import sys

from session_resume.cli.main import main

sys.exit(main())
