"""Declarative checks of estimator parameters, owned by the package.

Every estimator declares ``_parameter_constraints``: for each parameter, a list of the forms it
may take. A value is valid if it satisfies at least one of them. The forms are

* ``None`` (the value is ``None``), a class (``isinstance``), the builtin ``callable``;
* :class:`Interval` (a real or integer number in a range) and :class:`StrOptions` (one of a
  set of strings);
* the names ``"boolean"`` (``bool`` or ``numpy.bool_``), ``"array-like"`` (has a length, a
  shape or ``__array__``, and is not a scalar or a string), ``"random_state"`` (``None``, an
  integer in ``[0, 2**32 - 1]`` or a ``numpy.random.RandomState``/``Generator``) and
  ``"verbose"`` (a boolean or an integer >= 0).

The error follows the wording users know from scikit-learn (``The 'C' parameter of ModSVC must
be a float in the range (0, inf). Got -1 instead.``) and is an :class:`InvalidParameterError`,
a ``ValueError`` and a ``TypeError`` at once (both are what a caller may catch). Nothing here
imports a private scikit-learn name: the checks are ours, so a scikit-learn release cannot
change what the estimators accept.

:func:`validated_fit` wraps ``fit`` methods: parameters are checked once per top-level fit;
fits nested inside it (the one-vs-one binary clones, the Nystroem map) skip the check, and
``sklearn.set_config(skip_parameter_validation=True)`` (public) switches it off everywhere.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = [
    "InvalidParameterError",
    "Interval",
    "StrOptions",
    "check_dict_parameter",
    "check_parameters",
    "is_outermost_fit",
    "set_init_parameters",
    "validated_fit",
]


class InvalidParameterError(ValueError, TypeError):
    """A parameter has a value outside every form its constraints allow."""


class Interval:
    """Numbers of ``number_type`` (``Real`` or ``Integral``) between ``left`` and ``right``.

    Parameters
    ----------
    number_type : type
        ``numbers.Real`` (floats and integers) or ``numbers.Integral`` (integers only).
    left, right : float or None
        The ends; ``None`` is unbounded.
    closed : {"left", "right", "both", "neither"}
        Which ends belong to the interval.
    """

    def __init__(
        self,
        number_type: type,
        left: float | None,
        right: float | None,
        *,
        closed: str,
    ) -> None:
        if number_type not in (Real, Integral):
            raise TypeError(
                f"Interval takes numbers.Real or numbers.Integral; got {number_type!r}."
            )
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(
                f"closed must be 'left', 'right', 'both' or 'neither'; got {closed!r}."
            )
        if left is not None and right is not None and left > right:
            raise ValueError(f"Interval: left end {left} is above the right end {right}.")
        self.number_type = number_type
        self.left = left
        self.right = right
        self.closed = closed

    def is_satisfied_by(self, value: Any) -> bool:
        # bool is an Integral in Python; a flag where a number is expected is a mistake.
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, self.number_type):
            return False
        # An open end (None) still excludes the infinities: "(0, inf)" holds finite numbers.
        if isinstance(value, Real) and not math.isfinite(float(value)):
            return False
        if self.left is not None:
            low_ok = value >= self.left if self.closed in ("left", "both") else value > self.left
            if not low_ok:
                return False
        if self.right is not None:
            high_ok = (
                value <= self.right if self.closed in ("right", "both") else value < self.right
            )
            if not high_ok:
                return False
        return True

    def __str__(self) -> str:
        kind = "an int" if self.number_type is Integral else "a float"
        low = "-inf" if self.left is None else f"{self.left}"
        high = "inf" if self.right is None else f"{self.right}"
        opening = "[" if self.closed in ("left", "both") and self.left is not None else "("
        closing = "]" if self.closed in ("right", "both") and self.right is not None else ")"
        return f"{kind} in the range {opening}{low}, {high}{closing}"

    def __repr__(self) -> str:
        name = self.number_type.__name__
        return f"Interval({name}, {self.left}, {self.right}, closed={self.closed!r})"


class StrOptions:
    """One of a fixed set of strings."""

    def __init__(self, options: Iterable[str]) -> None:
        self.options = frozenset(options)
        if not all(isinstance(option, str) for option in self.options):
            raise TypeError(f"StrOptions takes strings; got {sorted(map(repr, self.options))}.")

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.options

    def __str__(self) -> str:
        listed = ", ".join(repr(option) for option in sorted(self.options))
        return f"a str among {{{listed}}}"

    def __repr__(self) -> str:
        return f"StrOptions({sorted(self.options)!r})"


def _is_array_like(value: Any) -> bool:
    has_form = hasattr(value, "__len__") or hasattr(value, "shape") or hasattr(value, "__array__")
    return has_form and not np.isscalar(value)


def _is_random_state(value: Any) -> bool:
    if value is None or isinstance(value, (np.random.RandomState, np.random.Generator)):
        return True
    return (
        isinstance(value, Integral)
        and not isinstance(value, (bool, np.bool_))
        and 0 <= int(value) <= 2**32 - 1
    )


def _is_boolean(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _is_verbose(value: Any) -> bool:
    return _is_boolean(value) or (isinstance(value, Integral) and int(value) >= 0)


#: The named forms and how they read in an error message.
_NAMED: dict[str, tuple[Callable[[Any], bool], str]] = {
    "array-like": (_is_array_like, "an array-like"),
    "boolean": (_is_boolean, "an instance of 'bool' or 'numpy.bool_'"),
    "random_state": (
        _is_random_state,
        "None, an int in the range [0, 4294967295] or a numpy RandomState/Generator",
    ),
    "verbose": (_is_verbose, "a bool or an int in the range [0, inf)"),
}


def _satisfies(value: Any, constraint: Any) -> bool:
    if constraint is None:
        return value is None
    if constraint is callable:
        return callable(value)
    if isinstance(constraint, str):
        if constraint not in _NAMED:
            raise ValueError(f"unknown parameter constraint {constraint!r}")
        return _NAMED[constraint][0](value)
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    return bool(constraint.is_satisfied_by(value))


def _describe(constraint: Any) -> str:
    if constraint is None:
        return "None"
    if constraint is callable:
        return "a callable"
    if isinstance(constraint, str):
        return _NAMED[constraint][1]
    if isinstance(constraint, type):
        return f"an instance of {constraint.__name__!r}"
    return str(constraint)


def check_parameters(
    constraints: Mapping[str, list[Any]], params: Mapping[str, Any], owner: str
) -> None:
    """Raise :class:`InvalidParameterError` for the first parameter that fits none of its forms.

    Parameters
    ----------
    constraints : mapping
        Parameter name -> list of allowed forms (see the module docstring). A list containing
        ``"no_validation"`` skips the parameter.
    params : mapping
        The values (``estimator.get_params(deep=False)``).
    owner : str
        The name used in the message (the estimator's class).
    """
    for name, allowed in constraints.items():
        if name not in params or "no_validation" in allowed:
            continue
        value = params[name]
        if any(_satisfies(value, constraint) for constraint in allowed):
            continue
        forms = [_describe(constraint) for constraint in allowed]
        wanted = forms[0] if len(forms) == 1 else f"{', '.join(forms[:-1])} or {forms[-1]}"
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be {wanted}. Got {value!r} instead."
        )


def check_dict_parameter(
    value: Mapping[str, Any] | None,
    constraints: Mapping[str, list[Any]],
    *,
    owner: str,
    name: str,
) -> dict[str, Any]:
    """A copy of the dict parameter ``name`` of ``owner`` after checking its keys and values.

    A key that is not in ``constraints`` is a ValueError listing the keys ``name`` takes; a
    value that fits none of its forms an :class:`InvalidParameterError` (as
    :func:`check_parameters`, naming ``name[key]``). ``None`` is the empty dict.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a dict or None. Got {value!r} instead."
        )
    unknown = [key for key in value if key not in constraints]
    if unknown:
        raise ValueError(
            f"{owner}: {name} has no key{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(k) for k in unknown)}; the keys {name} takes are "
            f"{', '.join(repr(k) for k in constraints)}."
        )
    params = dict(value)
    for key, allowed in constraints.items():
        if key in params:
            label = f"{name}[{key!r}]"
            check_parameters({label: allowed}, {label: params[key]}, owner)
    return params


#: True while a validated fit runs: the fits nested inside it skip the check.
_INSIDE_FIT: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "indefsvm_inside_validated_fit", default=False
)
#: The estimator whose fit the user called (None outside any fit): nested fits see another one.
_OUTERMOST_FIT: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "indefsvm_outermost_fit", default=None
)


def _validation_switched_off() -> bool:
    from sklearn import get_config

    return bool(get_config().get("skip_parameter_validation", False))


def validated_fit(fit: Callable[..., Any]) -> Callable[..., Any]:
    """Check ``self``'s parameters against ``_parameter_constraints`` before a top-level fit."""

    @functools.wraps(fit)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        outer = _OUTERMOST_FIT.set(self) if _OUTERMOST_FIT.get() is None else None
        try:
            if _INSIDE_FIT.get() or _validation_switched_off():
                return fit(self, *args, **kwargs)
            check_parameters(
                getattr(self, "_parameter_constraints", {}),
                self.get_params(deep=False),
                type(self).__name__,
            )
            token = _INSIDE_FIT.set(True)
            try:
                return fit(self, *args, **kwargs)
            finally:
                _INSIDE_FIT.reset(token)
        finally:
            if outer is not None:
                _OUTERMOST_FIT.reset(outer)

    return wrapper


def is_outermost_fit(estimator: Any) -> bool:
    """Whether ``estimator``'s ``fit`` is the one the user called (not a one-vs-one pair's or an
    internal cross-validation clone's fit inside it)."""
    return _OUTERMOST_FIT.get() is estimator


def set_init_parameters(estimator: Any, arguments: Mapping[str, Any]) -> None:
    """Store every argument of the estimator's ``__init__`` unchanged, under its own name.

    scikit-learn's rule for ``__init__``: no validation and no logic, so that ``get_params``,
    ``set_params`` and ``clone`` read the parameters back. Called as
    ``set_init_parameters(self, locals())`` at the end of ``__init__``; the signature stays
    explicit (scikit-learn reads the parameter names from it).
    """
    signature = inspect.signature(type(estimator).__init__)
    for name, parameter in signature.parameters.items():
        if name != "self" and parameter.kind is not parameter.VAR_KEYWORD:
            setattr(estimator, name, arguments[name])
