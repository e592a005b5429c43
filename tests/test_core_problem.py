"""core.problem's dtype checks: the names only ml_dtypes gives NumPy, and None."""
import importlib.util

import pytest

from autotrans.core.problem import elem_size, parse_dtype

HAS_ML_DTYPES = importlib.util.find_spec("ml_dtypes") is not None


@pytest.mark.skipif(HAS_ML_DTYPES, reason="ml_dtypes is installed here")
@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_an_ml_dtypes_name_without_it_says_what_is_missing(name):
    for check in (parse_dtype, elem_size):
        with pytest.raises(TypeError, match=rf"^dtype '{name}' needs the ml_dtypes package \(pip install ml_dtypes\)$"):
            check(name)


@pytest.mark.skipif(not HAS_ML_DTYPES, reason="ml_dtypes is not installed here")
def test_an_ml_dtypes_name_works_with_it_installed():
    assert parse_dtype("bfloat16").itemsize == elem_size("float8_e4m3fn") * 2 == 2


def test_other_unknown_names_and_none_are_still_refused():
    with pytest.raises(TypeError, match="unknown dtype 'float33'"):
        parse_dtype("float33")
    with pytest.raises(TypeError, match="dtype None names no type"):     # np.dtype(None) is float64
        parse_dtype(None)
