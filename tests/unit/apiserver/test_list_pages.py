"""Paginated lists: every page is current at the first page's resourceVersion, tokens are
single-use, and a list let go is Expired (the client starts again)."""

import pytest
from store_builders import make_pod

from cluster.api import codec
from cluster.api.errors import BadRequest, Expired
from cluster.apiserver.apiserver import APIServer
from cluster.apiserver.pages import OpenLists


def names(items) -> list[str]:
    return [codec.decode(b)["metadata"]["name"] for b in items]


def api_with(*pods) -> APIServer:
    api = APIServer()
    for p in pods:
        api.create(p, 0.0)
    return api


def test_pages_add_up_to_the_list_at_the_first_pages_rv_whatever_happens_between():
    api = api_with(*(make_pod(f"p{i}") for i in range(5)))
    first = api.list_page("Pod", None, 2)
    rv = first.resource_version
    api.create(make_pod("late"), 1.0)  # after the first page: not in this list
    api.delete("Pod", "default", "p4", None, 0, 1.0)  # deleted after: still listed
    second = api.list_page("Pod", None, 2, first.continue_token)
    third = api.list_page("Pod", None, 2, second.continue_token)
    assert [p.resource_version for p in (first, second, third)] == [rv] * 3
    assert names(first.items + second.items + third.items) == [f"p{i}" for i in range(5)]
    assert third.continue_token == "" and len(api.pages) == 0


@pytest.mark.parametrize("limit,pages", [(1, 3), (2, 2), (3, 1), (100, 1)])
def test_page_counts(limit, pages):
    api = api_with(*(make_pod(f"p{i}") for i in range(3)))
    page, seen = api.list_page("Pod", None, limit), 1
    while page.continue_token:
        page, seen = api.list_page("Pod", None, limit, page.continue_token), seen + 1
    assert seen == pages


def test_pages_keep_the_node_filter():
    api = api_with(make_pod("a", node="n1"), make_pod("b", node="n2"), make_pod("c", node="n1"))
    first = api.list_page("Pod", frozenset({"n1"}), 1)
    second = api.list_page("Pod", frozenset({"n1"}), 1, first.continue_token)
    assert names(first.items + second.items) == ["a", "c"] and second.continue_token == ""


def test_a_token_is_used_once():
    api = api_with(*(make_pod(f"p{i}") for i in range(3)))
    first = api.list_page("Pod", None, 1)
    api.list_page("Pod", None, 1, first.continue_token)
    with pytest.raises(Expired, match="no longer held"):
        api.list_page("Pod", None, 1, first.continue_token)


def test_the_oldest_list_is_let_go_past_the_limit():
    lists = OpenLists(max_open=2)
    items = [b"a", b"b", b"c"]
    tokens = [lists.first(7, items, 1).continue_token for _ in range(3)]
    with pytest.raises(Expired):
        lists.next(tokens[0], 1)
    assert lists.next(tokens[2], 1).items == [b"b"]


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_below_one_is_refused(limit):
    with pytest.raises(BadRequest, match=f"limit: {limit} must be at least 1"):
        APIServer().list_page("Pod", None, limit)


def test_an_unknown_token_is_expired():
    with pytest.raises(Expired, match="'nope'"):
        APIServer().list_page("Pod", None, 5, "nope")
