#pragma once
// Conditional Restricted Boltzmann Machine with Gaussian visible and sigmoid hidden units, as in
// AI4DL (see ../shared/data/ai4dl/README.md for the equations). For a scaled sample z_t and the
// history vector c_t of the previous n_his scaled samples:
//   h = sigmoid(W z_t + B c_t + h_bias)          (hidden activations)
//   v = W^T h + A c_t + v_bias                   (mean of the Gaussian visible units)
// The history vector is column-major, oldest sample first: c[j * n_his + i] = z[t - n_his + i][j].

#include <phasescale/model/types.hpp>

#include <cstdint>
#include <functional>
#include <vector>

namespace phasescale::model {

struct Crbm {
    int n_vis = 0;
    int n_hid = 0;
    int n_his = 0;
    Matrix W;       // n_hid x n_vis
    Matrix A;       // n_vis x n_cond
    Matrix B;       // n_hid x n_cond
    Vector v_bias;  // n_vis
    Vector h_bias;  // n_hid

    int n_cond() const { return n_vis * n_his; }

    // AI4DL's initialisation: weights N(0, sigma^2) scaled by 1 / (n_vis * n_his), zero biases.
    static Crbm initialise(int n_vis, int n_hid, int n_his, std::uint64_t seed, double sigma = 0.2);
};

// Hidden activations for every sample of one execution that has a full history: row r of the
// result belongs to sample r + n_his. Empty when the execution has n_his samples or fewer.
Matrix hidden_activations(const Crbm& crbm, const Matrix& z);

// The same numbers as hidden_activations, one sample at a time, for online use.
class CrbmStream {
public:
    explicit CrbmStream(const Crbm& crbm);
    // Adds a scaled sample; once n_his samples came before it, writes h and returns true.
    bool push(const double* z, double* h);
    void reset() { seen_ = 0; }

private:
    const Crbm* crbm_;
    Matrix ring_;  // the last n_his + 1 samples, oldest first once full
    std::size_t seen_ = 0;
};

struct CrbmTrainOptions {
    int epochs = 100;
    double learning_rate = 0.001;
    int batch = 1;                 // slices per update; 1 is the AI4DL reference
    int cd_steps = 1;              // k of CD-k
    double momentum = 0.0;         // 0 disables
    double weight_decay = 0.0;     // L2 on W, A and B; 0 disables
    int patience = 0;              // stop after this many epochs without improvement; 0 disables
    double min_improvement = 0.0;  // an epoch improves when its error drops by more than this
    std::uint64_t seed = 1;        // slice order
};

struct EpochReport {
    int epoch = 0;  // 1-based
    int epochs = 0;
    double reconstruction_error = 0;
    double seconds = 0;  // since training started
};

struct CrbmTrainResult {
    std::vector<double> reconstruction_error_per_epoch;
    bool stopped_early = false;
    std::size_t slices = 0;  // per epoch
    double seconds = 0;
    // Mean over the last epoch's slices of |v - v_reconstructed|_2, measured before each update,
    // as AI4DL computes it.
    double final_reconstruction_error() const;
};

// Trains with CD-k and SGD over all slices (a sample plus its n_his predecessors, within one
// execution) of the scaled executions, reshuffled each epoch. Mean-field like AI4DL: the negative
// phase uses hidden probabilities, not samples, so the only randomness is the slice order.
CrbmTrainResult train_crbm(Crbm& crbm, const std::vector<Matrix>& executions,
                           const CrbmTrainOptions& options,
                           const std::function<void(const EpochReport&)>& on_epoch = {});

}  // namespace phasescale::model
