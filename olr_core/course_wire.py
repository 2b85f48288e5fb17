"""Plain data between the grader and a graded notebook's sandbox: one JSON line per message.

Only data crosses: None, booleans, numbers, strings, lists, tuples, dicts with string keys, numpy arrays and
scalars of numeric or boolean dtype (as ``.npy`` bytes read back with ``allow_pickle=False``) and numpy random
generators (their bit generator's name and state, so a function that draws from the generator it is given
advances the caller's). Anything else is refused with :class:`WireError`; nothing is ever unpickled or
evaluated, so a hostile sandbox can send wrong values but never code.
"""

from __future__ import annotations

import base64
import io
import json

import numpy as np

MAX_MESSAGE_BYTES = 64 * 2 ** 20
MAX_STRING = 100_000
GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
ARRAY_KINDS = "biufc"


class WireError(ValueError):
    """A value that cannot cross between the grader and the sandbox (a message names what and why)."""


def _array_bytes(array: np.ndarray) -> str:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def encode(value, depth: int = 0):
    """``value`` as JSON-ready data (raises :class:`WireError` for anything but plain data)."""
    if depth > 50:
        raise WireError("a value nested more than 50 levels deep")
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            raise WireError(f"a string of {len(value):,} characters (at most {MAX_STRING:,})")
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind not in ARRAY_KINDS:
            raise WireError(f"a numpy array of dtype {array.dtype} (only numbers and booleans)")
        return {"__ndarray__" if isinstance(value, np.ndarray) else "__scalar__": _array_bytes(array)}
    if isinstance(value, np.random.Generator):
        bit_generator = value.bit_generator
        return {"__generator__": type(bit_generator).__name__, "state": encode(bit_generator.state, depth + 1)}
    if isinstance(value, (list, tuple)):
        items = [encode(item, depth + 1) for item in value]
        return items if isinstance(value, list) else {"__tuple__": items}
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise WireError("a dict whose keys are not all strings")
        return {"__dict__": {key: encode(item, depth + 1) for key, item in value.items()}}
    raise WireError(f"an object of type {type(value).__name__} (return numbers, strings, lists, tuples, dicts or "
                    "numpy arrays)")


def _array(text) -> np.ndarray:
    if not isinstance(text, str):
        raise WireError("an array that is not base64 text")
    try:
        array = np.load(io.BytesIO(base64.b64decode(text, validate=True)), allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise WireError(f"an unreadable array ({error})") from None
    if not isinstance(array, np.ndarray) or array.dtype.kind not in ARRAY_KINDS:
        raise WireError("an array that is not numbers or booleans")
    return array


def _generator(name, state) -> np.random.Generator:
    if name not in GENERATORS:
        raise WireError(f"a random generator of unknown kind {name!r}")
    bit_generator = getattr(np.random, name)()
    try:
        bit_generator.state = decode(state)
    except (TypeError, ValueError, KeyError) as error:
        raise WireError(f"a random generator with an invalid state ({error})") from None
    return np.random.Generator(bit_generator)


def decode(data, depth: int = 0):
    """The value :func:`encode` made ``data`` from (raises :class:`WireError` for anything else)."""
    if depth > 50:
        raise WireError("a value nested more than 50 levels deep")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(item, depth + 1) for item in data]
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise WireError("a message that is not plain data")
    if "__ndarray__" in data and len(data) == 1:
        return _array(data["__ndarray__"])
    if "__scalar__" in data and len(data) == 1:
        return _array(data["__scalar__"])[()]
    if "__tuple__" in data and len(data) == 1 and isinstance(data["__tuple__"], list):
        return tuple(decode(item, depth + 1) for item in data["__tuple__"])
    if "__dict__" in data and len(data) == 1 and isinstance(data["__dict__"], dict):
        return {str(key): decode(item, depth + 1) for key, item in data["__dict__"].items()}
    if "__generator__" in data and "state" in data:
        return _generator(data["__generator__"], data["state"])
    raise WireError("a message that is not plain data")


def dumps(message: dict) -> bytes:
    """One message as a JSON line (its values already :func:`encode`-d)."""
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def loads(line: bytes) -> dict:
    """One JSON line back into a dict (raises :class:`WireError` if it is not one)."""
    if len(line) > MAX_MESSAGE_BYTES:
        raise WireError(f"a message of {len(line):,} bytes (at most {MAX_MESSAGE_BYTES:,})")
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise WireError(f"a message that is not JSON ({str(error)[:80]})") from None
    if not isinstance(message, dict):
        raise WireError("a message that is not a JSON object")
    return message
