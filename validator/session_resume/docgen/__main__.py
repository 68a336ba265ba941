import sys

from session_resume.docgen.generate import main

sys.exit(main())
