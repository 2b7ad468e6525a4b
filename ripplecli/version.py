"""The version of ripple, in a module of its own: every part may read it without the package face, which names the
library (ripplecli.api) and so stands above all of them."""

__version__ = "0.1.0"
