"""The test suite never touches the user's own per-user folders (recent sites, settings, caches)."""

from __future__ import annotations

from pathlib import Path


def test_recent_sites_go_to_the_test_home(pytestconfig) -> None:
    from reviewer.app.recent import RecentSites

    home = pytestconfig.reviewer_test_home
    recent = RecentSites()
    assert Path(recent.path).is_relative_to(home), recent.path
    recent.add(home)
    assert recent.load() == [str(home.resolve())]
    assert not Path(recent.path).is_relative_to(Path.home() / ".config")


def test_caches_go_to_the_test_home(pytestconfig) -> None:
    import platformdirs

    from reviewer import APP_NAME

    home = pytestconfig.reviewer_test_home
    for folder in (platformdirs.user_cache_dir(APP_NAME), platformdirs.user_config_dir(APP_NAME)):
        assert Path(folder).is_relative_to(home), folder
