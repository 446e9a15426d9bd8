pytest_plugins = ["fabricopt.testing.pytest_plugin"]
import mine  # noqa: E402,F401 -- registers the method "mine" of circuits
def test_mine(check_method): check_method("circuits", "mine")
