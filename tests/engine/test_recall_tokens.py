"""Code-aware tokens: identifiers split into words and kept whole, the same for both sides."""

from __future__ import annotations

from moor_engine.memory.recall_tokens import joined_terms, query_terms, tokens


def test_a_dotted_snake_case_name_gives_its_words_each_segment_and_the_whole() -> None:
    found = tokens("Client.send_with_retry")
    assert found == ["client", "send", "with", "retry", "sendwithretry", "clientsendwithretry"]


def test_camel_case_and_snake_case_of_one_name_share_their_whole_token() -> None:
    camel, snake = tokens("sendWithRetry"), tokens("send_with_retry")
    assert "sendwithretry" in camel
    assert set(camel) == set(snake)
    # Control: a different name does not share it.
    assert "sendwithretry" not in tokens("send_without_retry")


def test_acronyms_and_digits_split_where_a_reader_splits_them() -> None:
    assert tokens("HTTPServer") == ["http", "server", "httpserver"]
    assert tokens("utf8Decode") == ["utf", "8", "decode", "utf8decode"]


def test_a_path_splits_at_slashes_and_dots_and_is_kept_whole() -> None:
    found = tokens("src/net/client.py#Client.send")
    assert found[:6] == ["src", "net", "client", "py", "client", "send"]
    assert found[-1] == "srcnetclientpyclientsend"


def test_rust_paths_split_at_double_colons() -> None:
    assert tokens("Client::send") == ["client", "send", "clientsend"]


def test_sentence_punctuation_is_not_taken_for_a_dotted_name() -> None:
    assert tokens("It retries. Then it stops.") == ["it", "retries", "then", "it", "stops"]


def test_plain_words_are_lowercased_and_nothing_is_added() -> None:
    assert tokens("Retries are SAFE") == ["retries", "are", "safe"]


def test_query_terms_drop_stopwords_and_repeats() -> None:
    assert query_terms("how does the retry of the send work") == ["retry", "send", "work"]


def test_a_query_of_nothing_but_stopwords_keeps_them() -> None:
    assert query_terms("what is it") == ["what", "is", "it"]


def test_non_ascii_words_are_kept() -> None:
    assert tokens("Größe_berechnen") == ["größe", "berechnen", "größeberechnen"]


def test_runs_of_query_words_are_joined_as_names_the_index_keeps_whole() -> None:
    assert joined_terms("load tests") == ["loadtests"]
    assert joined_terms("fraction from int") == ["fractionfrom", "fromint", "fractionfromint"]
    # A name the query already spells whole is not asked for twice; one word joins nothing.
    assert joined_terms("send_with_retry") == []
    assert joined_terms("retry") == []
