"""Numbers as a reader meets them: the one place where a generated number becomes text.

Every number of a page, a table or a generated sentence is printed by one of these functions:

- :func:`number_text`: a value to the precision its noise supports, about two significant digits of its s.d. or of
  its interval's width (:func:`decimals_for`); without a spread, to ``digits`` significant digits;
- :func:`estimate_text`: an estimate with its interval, "+0.006 [-0.065, +0.023]", all three to two significant
  digits of the interval's width; an end the runs leave open is said in words ("at most +0.02", "interval not
  estimable"), never "inf" or "n/a";
- :func:`count_text`: "1 run", "5 runs", never "run(s)".

What is never printed: "inf", "n/a", "NaN", "None", a negative zero, or float noise such as "-5.32e-13" where the
quantity is zero (a value below :data:`FLOAT_NOISE` of its scale prints as 0). Missing values print as
:data:`NOT_ESTIMABLE`, infinite ones as :data:`INFINITE` (a value) or :data:`UNBOUNDED` (an interval's end).
"""

from __future__ import annotations

import math
import numbers
import re

FLOAT_NOISE = 1e-12     # values that differ by less than this share of their size differ by rounding only
NOT_ESTIMABLE = "not estimable"
UNBOUNDED = "unbounded"
INFINITE = "infinite"


def is_missing(value) -> bool:
    """None, pandas' NA or a NaN."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isnan(value)


def is_number(value) -> bool:
    """A real number that is not a boolean (a numpy scalar too)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and type(value).__name__ != "bool_"


def decimals_for(width, significant: int = 2) -> int | None:
    """The decimals that show ``width`` (an s.d. or an interval's width) to ``significant`` significant digits,
    and so a value beside it to the precision its noise supports (39.7 -> 0, 0.0052 -> 4, 0.0877 -> 3); None
    without a positive finite width."""
    if is_missing(width) or not math.isfinite(width) or width <= 0:
        return None
    places = significant - 1 - math.floor(math.log10(width))
    if places > 0 and round(width, places) >= 10 ** (significant - places):   # 0.0996 rounds up to 0.10, not 0.100
        places -= 1
    return max(0, places)


def _unsigned_zero(text: str) -> str:
    """"-0", "-0.00", "+0.0" (a number rounded to zero) without its sign."""
    return text[1:] if text[:1] in "-+" and not text.strip("-+0.,") else text


def fixed(value: float, decimals: int, sign: bool = False) -> str:
    """``value`` with ``decimals`` decimals and thousands separators, "+" before a positive number with ``sign``;
    never "-0.0"."""
    return _unsigned_zero(f"{value:{'+' if sign else ''},.{max(decimals, 0)}f}")


def significant(value: float, digits: int = 3, sign: bool = False) -> str:
    """``value`` to at most ``digits`` significant digits without padding zeros (0.01 stays "0.01"); a number of
    ``digits`` or more integer digits whole, with thousands separators (42164.3 -> "42,164"), from a million on to
    ``digits`` significant digits (4319341 -> "4,320,000"); never "-0"."""
    if value == 0:
        return "0"
    if abs(value) < 1e-4 or abs(value) >= 1e15:         # a tiny or huge number: 2.5 × 10⁻⁷
        return powers_of_ten(value, digits, sign)
    if abs(value) >= 1e6:                                # a count in millions: its digits past noise are zeros
        return fixed(round(value, digits - 1 - math.floor(math.log10(abs(value)))), 0, sign)
    if abs(value) >= 10 ** (digits - 1):
        return fixed(value, 0, sign)
    places = digits - 1 - math.floor(math.log10(abs(value)))
    text = fixed(round(value, places), places, sign)
    return text.rstrip("0").rstrip(".") if "." in text else text


SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def powers_of_ten(value: float, digits: int = 3, sign: bool = False) -> str:
    """``value`` as a reader writes a very small or large number: "2.5 × 10⁻⁷" (not "2.5e-07")."""
    mantissa, _, exponent = f"{value:{'+' if sign else ''}.{digits - 1}e}".partition("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa} × 10{str(int(exponent)).translate(SUPERSCRIPTS)}"


def number_text(value, spread=None, sign: bool = False, digits: int = 3, scale=None) -> str:
    """One number as a reader sees it: to the decimals of two significant digits of ``spread`` (its s.d. or its
    interval's width) where that is positive and finite, else to ``digits`` significant digits; "+" before a
    positive one with ``sign``. A missing value is "not estimable", an infinite one "infinite"; with ``scale`` (the
    size of what the value is a difference of) a value below :data:`FLOAT_NOISE` of it is 0."""
    if is_missing(value):
        return NOT_ESTIMABLE
    if not is_number(value):
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{value:{'+' if sign else ''},}"
    value = float(value)
    if math.isinf(value):
        return INFINITE if value > 0 else f"minus {INFINITE}"
    if scale is not None and is_number(scale) and abs(value) <= FLOAT_NOISE * abs(float(scale)):
        return "0"
    places = decimals_for(spread)
    return significant(value, digits, sign) if places is None else fixed(value, places, sign)


def mean_sd_text(mean, sd, unit: str = "") -> str:
    """"mean ± s.d.", both to two significant digits of the s.d. ("876 ± 40", "1.00 ± 0.10"); the mean alone where the
    s.d. is not positive and finite."""
    suffix = f" {unit}" if unit else ""
    places = decimals_for(sd)
    if places is None or not _finite(mean):
        return number_text(mean) + suffix
    return f"{fixed(mean, places)} ± {fixed(sd, places)}{suffix}"


def _finite(value) -> bool:
    return is_number(value) and not is_missing(value) and math.isfinite(value)


def estimate_text(estimate, low, high, sign: bool = True, unit: str = "") -> str:
    """An estimate with its interval, all three to two significant digits of the interval's width:
    "+0.006 [-0.065, +0.023]". An open end is said in words: "-0.019, at most +0.020", "+0.10, at least +0.03",
    "+0.096 (interval not estimable)"; an interval of width 0 (a computed value) is "0.5 (exact)"; ``unit`` follows
    the numbers."""
    suffix = f" {unit}" if unit else ""
    if is_missing(estimate) and not (_finite(low) or _finite(high)):
        return NOT_ESTIMABLE
    if _finite(low) and _finite(high):
        places = decimals_for(high - low)
        if places is None:                                   # width 0: the value is computed, not estimated
            return f"{number_text(estimate, sign=sign)}{suffix} (exact)"
        ends = f"[{fixed(low, places, sign)}, {fixed(high, places, sign)}]"
        head = fixed(estimate, places, sign) if _finite(estimate) else number_text(estimate)
        return f"{head} {ends}{suffix}"
    end, word = (high, "at most") if _finite(high) else (low, "at least") if _finite(low) else (None, "")
    if end is None:
        return f"{number_text(estimate, sign=sign, digits=2)}{suffix} (interval not estimable)"
    width = abs(end - estimate) if _finite(estimate) else abs(end)
    places = decimals_for(width) or 0
    head = fixed(estimate, places, sign) if _finite(estimate) else number_text(estimate)
    return f"{head}, {word} {fixed(end, places, sign)}{suffix}"


NUMBER = r"[-+\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?"
ESTIMATE_INTERVAL = re.compile(rf"(?<![\w.])(?<![eE][-+])({NUMBER})\s*\[\s*({NUMBER})\s*,\s*({NUMBER})\s*\]")


def _value(text: str) -> float:
    return float(text.replace(",", "").replace("\u2212", "-"))


def _decimal_places(text: str) -> int:
    return len(text.partition(".")[2])


def interval_digit_problems(text: str) -> list[str]:
    """Each "estimate [low, high]" of ``text`` printed past its noise: a number with more decimals than show the
    interval's width to two significant digits ("+0.00632 [-0.0647, +0.023]": width 0.088, three decimals)."""
    out = []
    for match in ESTIMATE_INTERVAL.finditer(text):
        numbers_ = match.groups()
        if not all(re.search(r"\d", n) for n in numbers_):
            continue
        places = decimals_for(_value(numbers_[2]) - _value(numbers_[1]))
        if places is not None and max(_decimal_places(n) for n in numbers_) > places:
            out.append(match.group(0))
    return out


def interval_end_text(value, sign: bool = True, digits: int = 2) -> str:
    """One end of an interval on its own: the number, or "unbounded" for an open (infinite or missing) end."""
    return number_text(value, sign=sign, digits=digits) if _finite(value) else UNBOUNDED


def count_text(count: int, noun: str, plural: str | None = None) -> str:
    """"1 run", "5 runs", "1,000 queries" (``plural`` where adding an s is wrong)."""
    return f"{count:,} {noun if count == 1 else (plural or noun + 's')}"


def range_text(counts, noun: str, plural: str | None = None) -> str:
    """Counts that may differ, as one phrase: "5 runs" where all are 5, "15 to 135 runs" where they differ."""
    values = sorted({int(c) for c in counts})
    if not values:
        return count_text(0, noun, plural)
    if len(values) == 1:
        return count_text(values[0], noun, plural)
    return f"{values[0]:,} to {values[-1]:,} {plural or noun + 's'}"


def threshold_text(value, digits: int = 3) -> str:
    """A threshold as set (0.01, 0.5, 1e-12): never rounded to 0, without padding zeros."""
    return significant(float(value), digits) if _finite(value) else number_text(value)
