from __future__ import annotations

from ballot_guard.main import main

raise SystemExit(main())
