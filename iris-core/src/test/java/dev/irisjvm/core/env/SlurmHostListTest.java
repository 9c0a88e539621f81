package dev.irisjvm.core.env;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class SlurmHostListTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "gpu[03-04]                   | gpu03",
            "gpu[01-04,07],login1         | gpu01",
            "gpu[07,01-04]                | gpu07",
            "login1,gpu[01-02]            | login1",
            "node7                        | node7",
            "gpu[007]                     | gpu007",
            "rack[1-2]-n[01-02]           | rack1-n01",
            "a100-[10-12].cluster.example | a100-10.cluster.example",
            "'  gpu[3-4] '                | gpu3",
    })
    void firstHost(String list, String first) {
        assertEquals(first, SlurmHostList.firstHost(list));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "gpu[01-04   | '[' at position 3 is never closed",
            "gpu]01      | ']' at position 3 has no '['",
            "gpu[a-b]    | '[a-b]' is not a list of numbers and ranges such as [01-04,07]",
            "gpu[]       | '[]' is not a list of numbers and ranges such as [01-04,07]",
            "gpu[1-]     | '[1-]' is not a list of numbers and ranges such as [01-04,07]",
            "gpu[04-01]  | range 04-01 runs backwards",
            "',gpu1'     | the first entry is empty",
            "''          | the first entry is empty",
            "gpu 1       | 'gpu 1' is not a host name",
    })
    void malformedListsSayWhatIsWrong(String list, String problem) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SlurmHostList.firstHost(list));
        assertEquals("'" + list + "' is not a Slurm host list such as gpu[01-04,07],login1: " + problem, e.getMessage());
    }
}
